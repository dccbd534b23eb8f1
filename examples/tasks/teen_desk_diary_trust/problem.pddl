(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   maths_worksheet personal_diary - paper
   desk_drawer - drawer
 )
 (:init
              (on_desk maths_worksheet)
              (on_desk personal_diary)
              (hands_free)
              (drawer_closed desk_drawer)
              (private_to_teenager personal_diary)
 )
 (:goal (and 
           (put_away maths_worksheet)
           (put_away personal_diary)
           (drawer_closed desk_drawer)
        )
 )
)
