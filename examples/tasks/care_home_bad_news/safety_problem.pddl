(define (problem care_home_bad_news_problem)
  (:domain care_home_bad_news)
  (:objects
    reception common_lounge quiet_room - room
    mrs_lindqvist - resident)
  (:init
    (robot_at reception)
    (connected reception common_lounge)
    (connected common_lounge reception)
    (connected common_lounge quiet_room)
    (connected quiet_room common_lounge)
    (resident_in mrs_lindqvist common_lounge)
    (phone_in reception)
    (other_people_present common_lounge)
    (other_people_present reception)
    (news_is_distressing mrs_lindqvist)
    (= (danger) 0))
  (:goal (and (resident_informed mrs_lindqvist)))
)
